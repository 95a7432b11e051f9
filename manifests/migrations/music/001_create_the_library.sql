CREATE TABLE songs (
  id INTEGER PRIMARY KEY, title TEXT NOT NULL, artist TEXT NOT NULL, album TEXT,
  duration REAL, play_count INTEGER NOT NULL DEFAULT 0, last_played_at REAL,
  added_at REAL NOT NULL);
