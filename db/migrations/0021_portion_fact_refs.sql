ALTER TABLE `performance_portions` ADD `fact_refs` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
-- Portions confirmed before this migration counted what the derivation of their time gave them, from the facts
-- recorded by then (recorded_at <= confirmed_at), closing fills in (venue time, venue ref) order: their own closing
-- fill, the position's funding after the previous closing fill up to theirs, and the entry fills when first.
UPDATE `performance_portions` SET `fact_refs` = (
  SELECT json_group_array(f.venue_ref) FROM `result_facts` f
  WHERE f.position_id = `performance_portions`.position_id AND f.recorded_at <= `performance_portions`.confirmed_at AND (
    f.venue_ref = `performance_portions`.venue_ref
    OR (f.role = 'FUNDING' AND f.occurred_at <= `performance_portions`.closed_at
      AND f.occurred_at > coalesce((SELECT max(x.occurred_at) FROM `result_facts` x
        WHERE x.position_id = f.position_id AND x.role = 'EXIT'
          AND x.recorded_at <= `performance_portions`.confirmed_at
          AND (x.occurred_at < `performance_portions`.closed_at OR (x.occurred_at = `performance_portions`.closed_at
            AND x.venue_ref < `performance_portions`.venue_ref))), -1))
    OR (f.role = 'ENTRY' AND NOT EXISTS (SELECT 1 FROM `result_facts` x
      WHERE x.position_id = f.position_id AND x.role = 'EXIT'
        AND x.recorded_at <= `performance_portions`.confirmed_at
        AND (x.occurred_at < `performance_portions`.closed_at OR (x.occurred_at = `performance_portions`.closed_at
          AND x.venue_ref < `performance_portions`.venue_ref))))))
WHERE `status` = 'CONFIRMED';
