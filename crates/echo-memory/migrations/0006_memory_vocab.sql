-- Document frequency of every indexed memory term (FTS5's own counts), so a search can leave
-- out terms that occur in most memories: FTS5's BM25 floors their weight at about zero
-- anyway, but an OR over them makes every query visit every row.
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row');
