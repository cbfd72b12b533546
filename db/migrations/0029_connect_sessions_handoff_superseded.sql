ALTER TABLE `connect_sessions` ADD `superseded_ticket_hash` text;--> statement-breakpoint
ALTER TABLE `connect_sessions` ADD `handoff_token_hash` text;--> statement-breakpoint
CREATE UNIQUE INDEX `connect_sessions_superseded_ticket_hash_unique` ON `connect_sessions` (`superseded_ticket_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `connect_sessions_handoff_token_hash_unique` ON `connect_sessions` (`handoff_token_hash`);