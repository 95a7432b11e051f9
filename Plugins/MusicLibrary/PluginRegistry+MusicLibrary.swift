import LaunchOrchestrator

extension PluginRegistry {
  /// Registers `music.page` and `music.search`: one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerMusicLibrary() {
    register([MusicPageStep.self, MusicSearchStep.self])
  }
}
