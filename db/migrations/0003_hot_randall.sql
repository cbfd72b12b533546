CREATE TABLE `connect_sessions` (
	`session_id` text PRIMARY KEY NOT NULL,
	`partner_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`scheme` text NOT NULL,
	`purpose` text NOT NULL,
	`status` text NOT NULL,
	`failure_code` text,
	`token_hash` text NOT NULL,
	`ticket_hash` text,
	`ticket_expires_at` integer,
	`return_url` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`opened` integer DEFAULT false NOT NULL,
	`wallet_address` text,
	`agent_address` text,
	`sealed_agent_key` text,
	`pending_action` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`completed_at` integer,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `connect_sessions_token_hash_unique` ON `connect_sessions` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `connect_sessions_ticket_hash_unique` ON `connect_sessions` (`ticket_hash`);--> statement-breakpoint
CREATE INDEX `connect_sessions_client` ON `connect_sessions` (`client_id`,`provider_id`,`status`);--> statement-breakpoint
CREATE TABLE `provider_accounts` (
	`account_id` text PRIMARY KEY NOT NULL,
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`scheme` text NOT NULL,
	`connection` text NOT NULL,
	`api_key` text,
	`account_address` text,
	`agent_address` text,
	`sealed_secret` text NOT NULL,
	`permissions` text NOT NULL,
	`problems` text DEFAULT '[]' NOT NULL,
	`account_hint` text,
	`approved_builder_fee_tenths_bps` integer,
	`secret_retained` integer DEFAULT false NOT NULL,
	`connected_at` integer NOT NULL,
	`revoked_at` integer,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `provider_accounts_client` ON `provider_accounts` (`client_id`,`provider_id`);