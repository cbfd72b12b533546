ALTER TABLE `performance_portions` ADD `fact_refs` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
-- Portions confirmed before this migration counted, by the rule of their time: their closing fill, the
-- position's funding after its previous closing fill up to this one, and the entry fills when first.
UPDATE `performance_portions` SET `fact_refs` = (
  SELECT json_group_array(f.venue_ref) FROM `result_facts` f
  WHERE f.position_id = `performance_portions`.position_id AND (
    f.venue_ref = `performance_portions`.venue_ref
    OR (f.role = 'FUNDING' AND f.occurred_at <= `performance_portions`.closed_at
      AND f.occurred_at > coalesce((SELECT max(x.occurred_at) FROM `result_facts` x
        WHERE x.position_id = f.position_id AND x.role = 'EXIT'
          AND x.occurred_at < `performance_portions`.closed_at), -1))
    OR (f.role = 'ENTRY' AND NOT EXISTS (SELECT 1 FROM `result_facts` x
      WHERE x.position_id = f.position_id AND x.role = 'EXIT'
        AND x.occurred_at < `performance_portions`.closed_at))))
WHERE `status` = 'CONFIRMED';
