ALTER TABLE `positions` ADD `protection_attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `positions_open_accounts` ON `positions` (`status`,`client_id`,`provider_id`);--> statement-breakpoint
CREATE INDEX `intents_position` ON `intents` (`position_id`);