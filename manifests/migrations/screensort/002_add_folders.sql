-- Folders the user files results into.
CREATE TABLE folders (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
ALTER TABLE results ADD COLUMN folder_id INTEGER REFERENCES folders (id);
CREATE INDEX results_folder ON results (folder_id, sorted_at DESC);
