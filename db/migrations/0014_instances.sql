CREATE TABLE `cache_generations` (
	`cache` text PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `job_runs` (
	`job` text NOT NULL,
	`slot` integer NOT NULL,
	`owner` text NOT NULL,
	`leased_until` integer NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`summary` text,
	PRIMARY KEY(`job`, `slot`)
);
--> statement-breakpoint
CREATE TABLE `signer_nonces` (
	`signer` text PRIMARY KEY NOT NULL,
	`last_nonce` integer NOT NULL
);
