-- A turn's memory extraction is pending from its start until it ends, under the process
-- that runs it. A process that is gone before it ends (`echod ask` leaves after a bounded
-- wait, a crash) leaves it pending, and a later process runs it again, so what the person
-- said in that turn is not lost to memory. `extraction_tries` bounds the attempts.
ALTER TABLE turns ADD COLUMN extraction_message TEXT;
ALTER TABLE turns ADD COLUMN extraction_owner TEXT;
ALTER TABLE turns ADD COLUMN extraction_tries INTEGER NOT NULL DEFAULT 0;
CREATE INDEX turns_extraction_pending ON turns(extraction_owner)
    WHERE extraction_message IS NOT NULL;

-- Start-up recovery looks for spans left running; without an index that read the whole
-- table, which grows with months of traces.
CREATE INDEX spans_running ON spans(turn_id) WHERE status = 'running';
