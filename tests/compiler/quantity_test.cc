// The one quantity reader: Kubernetes' grammar (k8s.io/apimachinery/pkg/api/resource,
// quantity.go: "<quantity> ::= <signedNumber><suffix>", binary Ki..Ei, decimal n..E, or a
// decimal exponent), and the bytes lowering writes (boot.json's `max_bytes`).

#include "compiler/base/quantity.h"

#include <catch2/catch.hpp>

#include <limits>
#include <string>

namespace mlenv {
namespace {

TEST_CASE("quantities read every suffix of quantity.go") {
  CHECK(parse_quantity("512") == 512.0L);
  CHECK(parse_quantity("128Gi") == 128.0L * (1LL << 30));
  CHECK(parse_quantity("1Pi") == 0x1p50L);
  CHECK(parse_quantity("2Ei") == 0x1p61L);
  CHECK(parse_quantity("1P") == 1e15L);
  CHECK(parse_quantity("3E") == 3e18L);
  CHECK(parse_quantity("500m") == 0.5L);
  CHECK(parse_quantity("2e9") == 2e9L);
  CHECK(parse_quantity("2E3") == 2000.0L);
  CHECK(parse_quantity("5e-1") == 0.5L);
  CHECK(parse_quantity("+1k") == 1000.0L);
  CHECK(parse_quantity("-1k") == -1000.0L);
  CHECK(parse_quantity(".5Gi") == 0x1p29L);
  CHECK(parse_quantity("5.") == 5.0L);
}

TEST_CASE("equal quantities written differently read as equal") {
  CHECK(parse_quantity("100Gi") == parse_quantity("102400Mi"));
  CHECK(parse_quantity("1.1G") == parse_quantity("1100M"));
  CHECK(parse_quantity("0.5Gi") == parse_quantity("512Mi"));
}

TEST_CASE("what is not a quantity is refused") {
  for (const char* text : {"", "Gi", "10GB", "1e", "1E+", "1.2.3", "1 Gi", "1gi", "--1", ".", "1ki",
                           "0x10", "1e3Gi"}) {
    INFO(text);
    CHECK_FALSE(is_quantity(text));
  }
}

TEST_CASE("whole numbers round fractions up and saturate") {
  CHECK(quantity_integer("2e9") == 2000000000);
  CHECK(quantity_integer("1Pi") == std::int64_t{1} << 50);
  CHECK(quantity_integer("1Gi") == std::int64_t{1} << 30);
  CHECK(quantity_integer("1.5k") == 1500);
  CHECK(quantity_integer("500m") == 1);
  CHECK(quantity_integer("-3") == 0);
  CHECK(quantity_integer("8Ei") == std::numeric_limits<std::int64_t>::max());
  CHECK(quantity_integer("9e99999999999") == std::numeric_limits<std::int64_t>::max());
  CHECK(quantity_integer("1e-9") == 1);
  CHECK(quantity_integer("1e-99999999999") == 0);  // below the least long double: 0
  CHECK(quantity_integer(std::string(30000, '9') + "Ki") ==
        std::numeric_limits<std::int64_t>::max());
  CHECK_FALSE(quantity_integer("1GB"));
}

}  // namespace
}  // namespace mlenv
