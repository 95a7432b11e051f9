CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE works (
  id INTEGER PRIMARY KEY, title TEXT NOT NULL,
  author_id INTEGER REFERENCES authors(id), first_published INTEGER);
CREATE TABLE editions (
  id INTEGER PRIMARY KEY, work_id INTEGER NOT NULL REFERENCES works(id),
  isbn TEXT, page_count INTEGER, format TEXT);
CREATE TABLE library_entries (
  id INTEGER PRIMARY KEY, edition_id INTEGER NOT NULL REFERENCES editions(id),
  status TEXT NOT NULL DEFAULT 'toRead', added_at REAL NOT NULL, rating INTEGER);
