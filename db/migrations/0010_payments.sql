CREATE TABLE `payment_recipients` (
	`network_id` text PRIMARY KEY NOT NULL,
	`address` text NOT NULL,
	`receiver_version` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `payments` (
	`payment_id` text PRIMARY KEY NOT NULL,
	`partner_id` text NOT NULL,
	`client_id` integer NOT NULL,
	`obligation_id` text NOT NULL,
	`method` text NOT NULL,
	`status` text NOT NULL,
	`amount_micros` integer NOT NULL,
	`network_id` text,
	`token_symbol` text,
	`token_address` text,
	`token_decimals` integer,
	`token_amount` text,
	`recipient` text,
	`receiver_version` integer,
	`payer_address` text,
	`tx_hash` text,
	`issued_at` integer NOT NULL,
	`issued_wall_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`confirmed_at` integer,
	`review` text,
	`overpaid_token_amount` text,
	`failure_reason` text,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`obligation_id`) REFERENCES `obligations`(`obligation_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payments_open_amount` ON `payments` (`network_id`,`token_address`,`token_amount`) WHERE status IN ('PENDING', 'SUBMITTED');--> statement-breakpoint
CREATE UNIQUE INDEX `payments_credited_tx` ON `payments` (`network_id`,`tx_hash`) WHERE status = 'CONFIRMED';--> statement-breakpoint
CREATE INDEX `payments_obligation` ON `payments` (`obligation_id`);--> statement-breakpoint
CREATE INDEX `payments_open` ON `payments` (`status`,`expires_at`);