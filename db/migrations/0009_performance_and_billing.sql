CREATE TABLE `commercial_notices` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`state` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `credits` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`statement_id` text NOT NULL,
	`amount_micros` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`, `statement_id`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `obligation_reductions` (
	`obligation_id` text NOT NULL,
	`statement_id` text NOT NULL,
	`amount_micros` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`obligation_id`, `statement_id`),
	FOREIGN KEY (`obligation_id`) REFERENCES `obligations`(`obligation_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `obligations` (
	`obligation_id` text PRIMARY KEY NOT NULL,
	`partner_id` text NOT NULL,
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`source` text NOT NULL,
	`reference` text NOT NULL,
	`amount_micros` integer NOT NULL,
	`currency` text NOT NULL,
	`status` text NOT NULL,
	`due_at` integer NOT NULL,
	`grace_until` integer NOT NULL,
	`statement_id` text,
	`created_at` integer NOT NULL,
	`settled_at` integer,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `obligations_reference` ON `obligations` (`client_id`,`provider_id`,`source`,`reference`);--> statement-breakpoint
CREATE INDEX `obligations_open_due` ON `obligations` (`status`,`due_at`);--> statement-breakpoint
CREATE INDEX `obligations_client` ON `obligations` (`client_id`,`provider_id`,`status`);--> statement-breakpoint
CREATE TABLE `performance_portions` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`venue_ref` text NOT NULL,
	`position_id` text NOT NULL,
	`closed_at` integer NOT NULL,
	`status` text NOT NULL,
	`pending_reason` text,
	`realized_micros` integer NOT NULL,
	`venue_fees_micros` integer NOT NULL,
	`funding_micros` integer NOT NULL,
	`builder_fees_micros` integer NOT NULL,
	`net_micros` integer NOT NULL,
	`facts_count` integer NOT NULL,
	`confirmed_at` integer,
	`statement_id` text,
	PRIMARY KEY(`client_id`, `provider_id`, `venue_ref`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `performance_portions_period` ON `performance_portions` (`client_id`,`provider_id`,`closed_at`);--> statement-breakpoint
CREATE INDEX `performance_portions_unstated` ON `performance_portions` (`status`,`statement_id`);--> statement-breakpoint
CREATE TABLE `period_closes` (
	`partner_id` text NOT NULL,
	`period_start` integer NOT NULL,
	`period_end` integer NOT NULL,
	`contract_version` integer NOT NULL,
	`status` text NOT NULL,
	`after_client_id` integer DEFAULT 0 NOT NULL,
	`started_at` integer NOT NULL,
	`closed_at` integer,
	PRIMARY KEY(`partner_id`, `period_start`),
	FOREIGN KEY (`partner_id`) REFERENCES `partners`(`partner_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `statements` (
	`statement_id` text PRIMARY KEY NOT NULL,
	`partner_id` text NOT NULL,
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`kind` text NOT NULL,
	`adjusts_statement_id` text,
	`contract_version` integer NOT NULL,
	`period` text NOT NULL,
	`policy` text NOT NULL,
	`period_start` integer NOT NULL,
	`period_end` integer NOT NULL,
	`performance_fee_percent` text NOT NULL,
	`currency` text NOT NULL,
	`net_micros` integer NOT NULL,
	`realized_micros` integer NOT NULL,
	`venue_fees_micros` integer NOT NULL,
	`funding_micros` integer NOT NULL,
	`builder_fees_micros` integer NOT NULL,
	`carry_in_micros` integer NOT NULL,
	`carry_out_micros` integer NOT NULL,
	`chargeable_micros` integer NOT NULL,
	`fee_micros` integer NOT NULL,
	`credit_micros` integer NOT NULL,
	`source_facts_count` integer NOT NULL,
	`reason` text NOT NULL,
	`obligation_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `statements_original` ON `statements` (`client_id`,`provider_id`,`period_start`) WHERE kind = 'ORIGINAL';--> statement-breakpoint
CREATE INDEX `statements_client` ON `statements` (`client_id`,`provider_id`,`period_start`);--> statement-breakpoint
ALTER TABLE `account_states` ADD `funding_known_through` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `intents` ADD `execution_order_id` text;--> statement-breakpoint
ALTER TABLE `result_facts` ADD `fee_asset` text DEFAULT 'USDT' NOT NULL;--> statement-breakpoint
ALTER TABLE `result_facts` ADD `position_id` text;--> statement-breakpoint
ALTER TABLE `result_facts` ADD `role` text;--> statement-breakpoint
CREATE INDEX `result_facts_position` ON `result_facts` (`position_id`);