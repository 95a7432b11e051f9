CREATE INDEX library_entries_edition ON library_entries (edition_id);
