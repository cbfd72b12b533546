CREATE TABLE `evm_scan_cursors` (
	`network_id` text PRIMARY KEY NOT NULL,
	`next_block` integer NOT NULL,
	`last_block_hash` text,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `payments` ADD `tx_block` integer;--> statement-breakpoint
ALTER TABLE `payments` ADD `final_at` integer;--> statement-breakpoint
-- Transfers credited before finality was tracked are taken as final: they were credited under the network's
-- confirmations, most long ago, and some may be on networks this install no longer reads.
UPDATE `payments` SET `final_at` = `confirmed_at` WHERE `status` = 'CONFIRMED' AND `method` <> 'VENUE_B_USD_SEND';--> statement-breakpoint
CREATE INDEX `payments_network_issued` ON `payments` (`network_id`,`issued_wall_at`);--> statement-breakpoint
CREATE INDEX `payments_not_final` ON `payments` (`confirmed_at`) WHERE status = 'CONFIRMED' AND final_at IS NULL AND method <> 'VENUE_B_USD_SEND';