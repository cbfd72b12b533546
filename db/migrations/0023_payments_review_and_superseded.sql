-- Rows written before issue 27's crediting rules. A second transfer for an obligation already settled was stored
-- CONFIRMED with review OBLIGATION_ALREADY_SETTLED (all of it in overpaid_token_amount): it paid nothing, so it is
-- held for review (REVIEW), and confirm answers it so.
UPDATE `payments` SET `status` = 'REVIEW'
  WHERE `status` = 'CONFIRMED' AND `review` = 'OBLIGATION_ALREADY_SETTLED';--> statement-breakpoint
-- Open instructions of obligations settled or reduced before superseding existed stop asking for money, with the
-- failure_reason the service writes (superseded_instructions.ts, supersededReason).
UPDATE `payments` SET `status` = 'SUPERSEDED',
  `failure_reason` = 'OBLIGATION_NOT_OPEN: Esta cobrança já está paga; esta instrução não pode mais ser paga.'
  WHERE `status` IN ('PENDING', 'SUBMITTED')
    AND `obligation_id` IN (SELECT `obligation_id` FROM `obligations` WHERE `status` = 'PAID');--> statement-breakpoint
UPDATE `payments` SET `status` = 'SUPERSEDED',
  `failure_reason` = 'OBLIGATION_NOT_OPEN: Esta cobrança foi dispensada; não há nada a pagar.'
  WHERE `status` IN ('PENDING', 'SUBMITTED')
    AND `obligation_id` IN (SELECT `obligation_id` FROM `obligations` WHERE `status` = 'CANCELLED');--> statement-breakpoint
UPDATE `payments` SET `status` = 'SUPERSEDED',
  `failure_reason` = 'PAYMENT_SUPERSEDED: O valor da cobrança mudou depois desta instrução; peça uma nova instrução de pagamento.'
  WHERE `status` IN ('PENDING', 'SUBMITTED')
    AND `amount_micros` > (
      SELECT o.`amount_micros` - coalesce((SELECT sum(r.`amount_micros`) FROM `obligation_reductions` r
        WHERE r.`obligation_id` = o.`obligation_id`), 0)
      FROM `obligations` o WHERE o.`obligation_id` = `payments`.`obligation_id` AND o.`status` = 'OPEN'
    );
