import SQLiteStore

/// A page of songs, as `music.page` and `music.search` output it.
public typealias MusicPage = Page<Song>
