DROP INDEX `clients_partner_created`;--> statement-breakpoint
CREATE INDEX `clients_partner_list` ON `clients` (`partner_id`,`created_at`,`id`,`external_user_id`,`tenant_id`,`status`,`updated_at`);