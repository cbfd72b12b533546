CREATE TABLE `entry_leases` (
	`client_id` integer NOT NULL,
	`provider_id` text NOT NULL,
	`owner` text,
	`fence` integer NOT NULL,
	`leased_until` integer NOT NULL,
	PRIMARY KEY(`client_id`, `provider_id`),
	FOREIGN KEY (`client_id`) REFERENCES `clients`(`id`) ON UPDATE no action ON DELETE no action
);
