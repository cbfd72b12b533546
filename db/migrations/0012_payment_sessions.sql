CREATE TABLE `payment_sessions` (
	`payment_id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`ticket_hash` text,
	`status` text NOT NULL,
	`return_url` text,
	`expires_at` integer NOT NULL,
	`wallet_address` text,
	`pending_action` text,
	`signed_nonce` integer,
	FOREIGN KEY (`payment_id`) REFERENCES `payments`(`payment_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payment_sessions_token_hash_unique` ON `payment_sessions` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `payment_sessions_ticket_hash_unique` ON `payment_sessions` (`ticket_hash`);