ALTER TABLE `provider_accounts` ADD `access_expires_at` integer;--> statement-breakpoint
ALTER TABLE `provider_accounts` ADD `access_checked_at` integer;--> statement-breakpoint
ALTER TABLE `provider_accounts` ADD `access_expiry_warned_at` integer;--> statement-breakpoint
CREATE INDEX `provider_accounts_access_expiry` ON `provider_accounts` (`connection`,`access_expires_at`);