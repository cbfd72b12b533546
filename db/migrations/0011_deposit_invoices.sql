CREATE TABLE `deposit_xpubs` (
	`network_id` text PRIMARY KEY NOT NULL,
	`xpub` text NOT NULL,
	`next_index` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
DROP INDEX `payments_open_amount`;--> statement-breakpoint
ALTER TABLE `payments` ADD `derivation_index` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `payments_open_amount_to` ON `payments` (`network_id`,`token_address`,`recipient`,`token_amount`) WHERE status IN ('PENDING', 'SUBMITTED');