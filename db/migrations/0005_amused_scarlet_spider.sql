ALTER TABLE `asset_policies` ADD `max_signal_notional_micros` integer;--> statement-breakpoint
ALTER TABLE `asset_policies` ADD `max_asset_notional_micros` integer;--> statement-breakpoint
ALTER TABLE `asset_policies` ADD `max_direction_notional_micros` integer;--> statement-breakpoint
ALTER TABLE `automations` ADD `last_cohort_signal` integer;--> statement-breakpoint
ALTER TABLE `provider_settings` ADD `max_entries_per_signal` integer;--> statement-breakpoint
ALTER TABLE `signals` ADD `sequence` integer DEFAULT 0 NOT NULL;