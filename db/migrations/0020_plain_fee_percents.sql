-- Fee percents were stored as String(number): a fraction under 1e-6 became exponent notation ("1e-7",
-- "1.5e-7"), which no decimal reader parses. Rewrite each as the same exact decimal ("0.0000001",
-- "0.00000015"): String(number) writes one digit before the point and a negative exponent.
UPDATE `contract_versions` SET `performance_fee_percent` = '0.'
  || substr(hex(zeroblob(CAST(substr(`performance_fee_percent`, instr(`performance_fee_percent`, 'e-') + 2) AS INTEGER))), 1,
    CAST(substr(`performance_fee_percent`, instr(`performance_fee_percent`, 'e-') + 2) AS INTEGER) - 1)
  || replace(substr(`performance_fee_percent`, 1, instr(`performance_fee_percent`, 'e-') - 1), '.', '')
WHERE `performance_fee_percent` GLOB '[0-9]e-[1-9]*' OR `performance_fee_percent` GLOB '[0-9].[0-9]*e-[1-9]*';--> statement-breakpoint
UPDATE `statements` SET `performance_fee_percent` = '0.'
  || substr(hex(zeroblob(CAST(substr(`performance_fee_percent`, instr(`performance_fee_percent`, 'e-') + 2) AS INTEGER))), 1,
    CAST(substr(`performance_fee_percent`, instr(`performance_fee_percent`, 'e-') + 2) AS INTEGER) - 1)
  || replace(substr(`performance_fee_percent`, 1, instr(`performance_fee_percent`, 'e-') - 1), '.', '')
WHERE `performance_fee_percent` GLOB '[0-9]e-[1-9]*' OR `performance_fee_percent` GLOB '[0-9].[0-9]*e-[1-9]*';
