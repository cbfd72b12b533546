CREATE TABLE `account_pushes` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`owner` text NOT NULL,
	`live` integer NOT NULL,
	`covers_orders` integer NOT NULL,
	`covers_funding` integer NOT NULL,
	`changed_at` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `service_leases` (
	`name` text PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`leased_until` integer NOT NULL
);
