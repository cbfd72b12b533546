-- Intents written before issue 29's defect 3 was fixed: an order sent again after NOT_AT_VENUE (or PROVIDER_DOWN,
-- a refused credential), or settled by a query after a lost answer, kept the earlier send's error beside the status
-- the venue gave it (FILLED with NOT_AT_VENUE). A working or filled order carries no error, nor does one cancelled or
-- expired but for its entry timeout (ENTRY_TIMEOUT, which an entry filled just before its cancel also kept).
UPDATE `intents` SET `error_code` = NULL, `error_message` = NULL
  WHERE `error_code` IS NOT NULL
    AND (`status` IN ('SUBMITTING', 'ACCEPTED', 'PARTIALLY_FILLED', 'FILLED')
      OR (`status` IN ('CANCELED', 'EXPIRED') AND `error_code` <> 'ENTRY_TIMEOUT'));
