-- Each screenshot the app has sorted, with the label it chose.
CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  image_path TEXT NOT NULL,
  label TEXT NOT NULL,
  confidence REAL NOT NULL,
  sorted_at REAL NOT NULL
);
-- The first screen lists the newest results: an index scan that stops after the page.
CREATE INDEX results_recent ON results (sorted_at DESC, id);
