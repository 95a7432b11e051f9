/// When an app's splash screen gives way to its content, and when a skeleton shows instead:
/// the manifest's `splash` object.
///
/// With `m` = ``minimum``, `k` = ``skeletonAfter`` and `T` = the time ``dismissOn`` is
/// reached: when `T <= m + k` the splash shows until `max(m, T)`, then the content, and no
/// skeleton ever shows (no flicker); when `T > m + k` the splash shows until `m + k`, a
/// skeleton from then until `T`, then the content. A launch that routes leaves the splash for
/// its route at `max(m, time of the route)`; a failed launch for the failure, likewise.
package struct SplashPolicy: Sendable, Equatable {
  /// The milestone that brings the content, such as `interactive`.
  package var dismissOn: String
  /// The splash shows at least this long (seed 003's minimum splash time).
  package var minimum: Duration
  /// How late past ``minimum`` content may be before a skeleton replaces the splash.
  package var skeletonAfter: Duration

  /// Creates a policy; the defaults dismiss on `interactive` with no minimum and a skeleton
  /// after 150 ms.
  package init(
    dismissOn: String = "interactive", minimum: Duration = .zero,
    skeletonAfter: Duration = .milliseconds(150)
  ) {
    self.dismissOn = dismissOn
    self.minimum = minimum
    self.skeletonAfter = skeletonAfter
  }

  /// When a skeleton replaces the splash if the content is not there yet: `minimum +
  /// skeletonAfter`.
  package var skeletonDeadline: Duration { minimum + skeletonAfter }

  /// When the splash gives way, for content (or a route, or a failure) ready at `time`.
  package func splashEnd(readyAt time: Duration) -> Duration { max(minimum, time) }
}
