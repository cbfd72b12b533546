CREATE TABLE `webhook_attempts` (
	`delivery_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`at` integer NOT NULL,
	`latency_ms` integer NOT NULL,
	`response_code` integer,
	`excerpt` text,
	PRIMARY KEY(`delivery_id`, `attempt`),
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`delivery_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`delivery_id` text PRIMARY KEY NOT NULL,
	`partner_id` text NOT NULL,
	`event_seq` integer NOT NULL,
	`event_id` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`claimed_until` integer DEFAULT 0 NOT NULL,
	`last_response_code` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`delivered_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_event` ON `webhook_deliveries` (`partner_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_partner` ON `webhook_deliveries` (`partner_id`,`status`,`event_seq`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`partner_id` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`sealed_secret` text NOT NULL,
	`previous_sealed_secret` text,
	`previous_until` integer,
	`after_seq` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`partner_id`) REFERENCES `partners`(`partner_id`) ON UPDATE no action ON DELETE no action
);
