CREATE TABLE `deposit_xpub_counters` (
	`network_id` text NOT NULL,
	`xpub` text NOT NULL,
	`next_index` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`network_id`, `xpub`)
);
--> statement-breakpoint
-- Each network's key keeps counting from where it is (keys replaced before this migration kept no counter:
-- deposit_invoices.ts skips any address a payment of the network already has).
INSERT INTO `deposit_xpub_counters` (`network_id`, `xpub`, `next_index`, `updated_at`)
SELECT `network_id`, `xpub`, `next_index`, `updated_at` FROM `deposit_xpubs`;--> statement-breakpoint
CREATE INDEX `payments_recipient` ON `payments` (`network_id`,`recipient`);--> statement-breakpoint
ALTER TABLE `deposit_xpubs` DROP COLUMN `next_index`;
