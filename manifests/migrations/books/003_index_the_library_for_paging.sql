CREATE INDEX library_entries_added ON library_entries (added_at DESC, id);
CREATE INDEX works_title ON works (title COLLATE NOCASE, id);
CREATE INDEX editions_work ON editions (work_id);
