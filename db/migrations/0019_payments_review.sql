DROP INDEX `payments_credited_tx`;--> statement-breakpoint
CREATE UNIQUE INDEX `payments_credited_tx` ON `payments` (`network_id`,`tx_hash`) WHERE status IN ('CONFIRMED', 'REVIEW');