CREATE INDEX songs_most_played ON songs (play_count DESC, id);
CREATE INDEX songs_recently_played ON songs (last_played_at DESC, id);
CREATE INDEX songs_recently_added ON songs (added_at DESC, id);
CREATE INDEX songs_alphabetical ON songs (title COLLATE NOCASE, id);
