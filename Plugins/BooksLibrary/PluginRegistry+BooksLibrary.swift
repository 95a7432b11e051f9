import LaunchOrchestrator

extension PluginRegistry {
  /// Registers `books.page`, the first page of the books library: one call for the family, which an app links on its own (this
  /// product) without the other built-in kinds.
  public mutating func registerBooksLibrary() {
    register([BooksPageStep.self])
  }
}
