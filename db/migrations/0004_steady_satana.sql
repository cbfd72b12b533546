CREATE TABLE `account_states` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`positions` text NOT NULL,
	`resting_entries` integer NOT NULL,
	`symbol_settings` text DEFAULT '{}' NOT NULL,
	`facts_cursor` integer NOT NULL,
	`reconciled_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `admissions` (
	`signal_id` text NOT NULL,
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`decision` text NOT NULL,
	`code` text,
	`stage` text,
	`detail` text,
	`quantity` text,
	`price` text,
	`intent_id` text,
	`evaluated_at` integer NOT NULL,
	PRIMARY KEY(`signal_id`, `client_id`),
	FOREIGN KEY (`signal_id`) REFERENCES `signals`(`signal_id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `admissions_by_client` ON `admissions` (`client_id`,`evaluated_at`);--> statement-breakpoint
CREATE TABLE `asset_policies` (
	`provider_id` text NOT NULL,
	`symbol` text NOT NULL,
	`min_notional_micros` integer NOT NULL,
	`max_notional_micros` integer NOT NULL,
	`max_spread_bps` integer NOT NULL,
	`max_slippage_bps` integer NOT NULL,
	`max_book_fraction` text NOT NULL,
	`memecoin` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`provider_id`, `symbol`)
);
--> statement-breakpoint
CREATE TABLE `automations` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`strategy_id` text NOT NULL,
	`strategy_version` text NOT NULL,
	`enabled` integer NOT NULL,
	`risk` text NOT NULL,
	`conditions` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `automations_routing` ON `automations` (`strategy_id`,`provider_id`,`enabled`,`client_id`);--> statement-breakpoint
CREATE TABLE `daily_results` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`day` integer NOT NULL,
	`realized` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`, `day`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `intents` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`partner_id` text NOT NULL,
	`intent_id` text NOT NULL,
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`type` text NOT NULL,
	`opens_position` integer NOT NULL,
	`symbol` text NOT NULL,
	`side` text NOT NULL,
	`order_type` text NOT NULL,
	`quantity` text NOT NULL,
	`price` text,
	`trigger_price` text,
	`time_in_force` text,
	`reduce_only` integer NOT NULL,
	`leverage` integer,
	`client_order_id` text NOT NULL,
	`position_id` text,
	`signal_id` text,
	`protection_plan` text,
	`status` text NOT NULL,
	`order_id` text,
	`executed_quantity` text DEFAULT '0' NOT NULL,
	`executed_price` text,
	`error_code` text,
	`error_message` text,
	`created_at` integer NOT NULL,
	`submitted_at` integer,
	`sent_wall_at` integer,
	`finalized_at` integer,
	`reconciled_at` integer,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `intents_partner_intent` ON `intents` (`partner_id`,`intent_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `intents_client_order` ON `intents` (`provider_id`,`client_id`,`client_order_id`);--> statement-breakpoint
CREATE INDEX `intents_client_recent` ON `intents` (`client_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `intents_one_entry_in_flight` ON `intents` (`client_id`,`provider_id`) WHERE opens_position = 1 AND status IN ('SUBMITTING', 'UNCERTAIN');--> statement-breakpoint
CREATE TABLE `positions` (
	`position_id` text PRIMARY KEY NOT NULL,
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`symbol` text NOT NULL,
	`side` text NOT NULL,
	`quantity` text NOT NULL,
	`entry_price` text NOT NULL,
	`leverage` integer,
	`stop_loss_price` text,
	`take_profits` text NOT NULL,
	`auto_break_even` integer NOT NULL,
	`break_even_done` integer DEFAULT false NOT NULL,
	`protection_status` text NOT NULL,
	`protection_reason` text,
	`entry_intent_id` integer NOT NULL,
	`signal_id` text,
	`status` text NOT NULL,
	`opened_at` integer NOT NULL,
	`closed_at` integer,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `positions_client` ON `positions` (`client_id`,`status`);--> statement-breakpoint
CREATE UNIQUE INDEX `positions_entry_intent` ON `positions` (`entry_intent_id`);--> statement-breakpoint
CREATE TABLE `result_facts` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`venue_ref` text NOT NULL,
	`kind` text NOT NULL,
	`symbol` text NOT NULL,
	`order_id` text,
	`client_order_id` text,
	`side` text,
	`price` text,
	`quantity` text,
	`realized_pnl` text NOT NULL,
	`venue_fee` text NOT NULL,
	`builder_fee` text NOT NULL,
	`funding` text NOT NULL,
	`net` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`recorded_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`, `venue_ref`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `result_facts_by_time` ON `result_facts` (`client_id`,`provider_id`,`occurred_at`);--> statement-breakpoint
CREATE TABLE `signals` (
	`signal_id` text PRIMARY KEY NOT NULL,
	`strategy_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`symbol` text NOT NULL,
	`side` text NOT NULL,
	`entry_price` text NOT NULL,
	`stop_loss_price` text,
	`take_profits` text NOT NULL,
	`confidence` integer NOT NULL,
	`content_hash` text NOT NULL,
	`status` text NOT NULL,
	`summary` text,
	`received_at` integer NOT NULL,
	`evaluated_at` integer
);
--> statement-breakpoint
ALTER TABLE `client_setups` ADD `mode` text DEFAULT 'REAL' NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `market` text DEFAULT 'FUTURES' NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `margin_type` text DEFAULT 'ISOLATED' NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `order_size_micros` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `allowed_symbols` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `allow_memecoins` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `auto_stop_loss` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `auto_take_profit` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `auto_break_even` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `max_adverse_entry_percent` text DEFAULT '0.5' NOT NULL;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `capital_base_micros` integer;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `max_loss_per_trade_micros` integer;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `entry_timeout_minutes` integer;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `max_open_notional_micros` integer;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `max_same_direction` integer;--> statement-breakpoint
ALTER TABLE `client_setups` ADD `acknowledged_fingerprint` text;