/// A value computed the first time it is asked for, then kept: what describing a plugin costs
/// (reflection, type names, conformance lookups) is paid by whoever asks, not by every launch
/// that builds a registry.
package final class Lazy<Value: Sendable>: Sendable {
  private let make: @Sendable () -> Value
  private let storage = Locked<Value?>(nil)

  /// Computes the value with `make` the first time ``value`` is read.
  package init(_ make: @escaping @Sendable () -> Value) {
    self.make = make
  }

  /// The value, computed now if it was not yet. Two threads asking at once may both compute
  /// it; they compute the same value and the first one kept wins.
  package var value: Value {
    if let known = storage.withLock({ $0 }) { return known }
    let made = make()
    return storage.withLock { kept in
      if let kept { return kept }
      kept = made
      return made
    }
  }
}
