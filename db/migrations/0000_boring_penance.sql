CREATE TABLE `audit_entries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`partner_id` text NOT NULL,
	`actor` text NOT NULL,
	`action` text NOT NULL,
	`reason` text,
	`before` text,
	`after` text,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_partner_at` ON `audit_entries` (`partner_id`,`at`);--> statement-breakpoint
CREATE TABLE `client_setups` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`enabled` integer NOT NULL,
	`leverage` integer NOT NULL,
	`max_margin_per_trade_micros` integer NOT NULL,
	`max_concurrent_trades` integer NOT NULL,
	`max_daily_loss_micros` integer NOT NULL,
	`outside_envelope` integer DEFAULT false NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `clients` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`partner_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`external_user_id` text NOT NULL,
	`status` text NOT NULL,
	`strategy_selection` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`partner_id`) REFERENCES `partners`(`partner_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `clients_partner_external` ON `clients` (`partner_id`,`external_user_id`);--> statement-breakpoint
CREATE INDEX `clients_partner_created` ON `clients` (`partner_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `contract_versions` (
	`partner_id` text NOT NULL,
	`version` integer NOT NULL,
	`effective_from` integer NOT NULL,
	`suspended` integer NOT NULL,
	`subscription_monthly_micros` integer NOT NULL,
	`subscription_providers` text NOT NULL,
	`currency` text NOT NULL,
	`performance_fee_percent` text NOT NULL,
	`performance_period` text NOT NULL,
	`carry_policy` text NOT NULL,
	`due_days` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`partner_id`, `version`),
	FOREIGN KEY (`partner_id`) REFERENCES `partners`(`partner_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `credentials` (
	`client_id` text PRIMARY KEY NOT NULL,
	`partner_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`partner_id`) REFERENCES `partners`(`partner_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `credentials_partner` ON `credentials` (`partner_id`);--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`partner_id` text NOT NULL,
	`tenant_id` text,
	`external_user_id` text,
	`occurred_at` integer NOT NULL,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_event_id_unique` ON `events` (`event_id`);--> statement-breakpoint
CREATE INDEX `events_partner_seq` ON `events` (`partner_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_partner_type_seq` ON `events` (`partner_id`,`event_type`,`seq`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`partner_id` text NOT NULL,
	`route` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`state` text NOT NULL,
	`locked_until` integer NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`partner_id`, `route`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotency_expires` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
CREATE TABLE `partner_restrictions` (
	`partner_id` text PRIMARY KEY NOT NULL,
	`providers` text,
	`strategies` text,
	`envelope` text,
	`version` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`partner_id`) REFERENCES `partners`(`partner_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `partners` (
	`partner_id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`grants` text NOT NULL,
	`envelope` text NOT NULL,
	`builder_fee_tenths_bps` integer NOT NULL,
	`return_url_origins` text NOT NULL,
	`requests_per_minute` integer NOT NULL,
	`orders_per_minute` integer NOT NULL,
	`legacy_tenant_ids` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `provider_settings` (
	`provider_id` text PRIMARY KEY NOT NULL,
	`real_execution` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `strategies` (
	`strategy_id` text PRIMARY KEY NOT NULL,
	`version` text NOT NULL,
	`status` text NOT NULL,
	`display_name` text NOT NULL,
	`summary` text NOT NULL,
	`supported_providers` text NOT NULL,
	`supported_markets` text NOT NULL,
	`configurable_parameters` text NOT NULL,
	`risk_requirements` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `usage_buckets` (
	`partner_id` text NOT NULL,
	`kind` text NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`partner_id`, `kind`, `window_start`)
);
