CREATE VIRTUAL TABLE songs_search USING fts5 (
  title, artist, album, content='songs', content_rowid='id');
CREATE TRIGGER songs_search_insert AFTER INSERT ON songs BEGIN
  INSERT INTO songs_search (rowid, title, artist, album)
  VALUES (new.id, new.title, new.artist, new.album);
END;
CREATE TRIGGER songs_search_delete AFTER DELETE ON songs BEGIN
  INSERT INTO songs_search (songs_search, rowid, title, artist, album)
  VALUES ('delete', old.id, old.title, old.artist, old.album);
END;
CREATE TRIGGER songs_search_update AFTER UPDATE ON songs BEGIN
  INSERT INTO songs_search (songs_search, rowid, title, artist, album)
  VALUES ('delete', old.id, old.title, old.artist, old.album);
  INSERT INTO songs_search (rowid, title, artist, album)
  VALUES (new.id, new.title, new.artist, new.album);
END;
INSERT INTO songs_search (songs_search) VALUES ('rebuild');
