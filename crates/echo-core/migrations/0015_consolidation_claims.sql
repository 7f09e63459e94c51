-- A consolidation claim names its owner (the claiming process's instance) and where the
-- stretch started, until the consolidation is written. A claim whose owner died is given
-- back at the next start, so a crash mid-consolidation no longer leaves a stretch claimed
-- but never consolidated.
ALTER TABLE sessions ADD COLUMN consolidation_owner TEXT;
ALTER TABLE sessions ADD COLUMN consolidation_from INTEGER;
