CREATE TABLE `egress_budgets` (
	`provider_id` text NOT NULL,
	`egress` text NOT NULL,
	`window_start` integer NOT NULL,
	`spent` integer NOT NULL,
	PRIMARY KEY(`provider_id`, `egress`, `window_start`)
);
