CREATE TABLE scans (
  id INTEGER PRIMARY KEY, image_path TEXT, reviewed INTEGER NOT NULL DEFAULT 0,
  created_at REAL NOT NULL);
