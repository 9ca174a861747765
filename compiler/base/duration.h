#pragma once
// The one reader of durations (`30s`, `5m`, `1h30m`, `250ms`): the language's `duration` type
// and the command lines' `--timeout` read them here, so both accept the same spellings.

#include <cstdint>
#include <optional>
#include <string_view>

namespace mlenv {

/// Milliseconds in `text`: one or more parts `<digits><unit>`, each of at most 12 digits, with
/// the unit `h`, `m`, `s` or `ms` (`1h30m`, `90s`, `250ms`), as Go's time.ParseDuration spells
/// them less fractions and signs. nullopt where `text` is not one, or where the sum would
/// overflow.
std::optional<std::int64_t> parse_duration_ms(std::string_view text);

}  // namespace mlenv
