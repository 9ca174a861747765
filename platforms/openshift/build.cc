#include "platforms/openshift/builders.h"

namespace mlenv::target::openshift {

std::string internal_image(const EnvLayout& layout) {
  return "image-registry.openshift-image-registry.svc:5000/" + layout.namespace_name + "/" +
         layout.image_tag;
}

Object image_stream(const EnvLayout& layout) {
  Object o = make_object("image.openshift.io/v1", "ImageStream", layout.image_name,
                         layout.namespace_name, layout.labels);
  o.order = ApplyOrder::Image;
  o.body.set("spec", Value::map()).set("lookupPolicy", Value::map()).set("local", true);
  return o;
}

Object build_config(const EnvLayout& layout) {
  Object o = make_object("build.openshift.io/v1", "BuildConfig", layout.image_name,
                         layout.namespace_name, layout.labels);
  o.order = ApplyOrder::Build;
  Value& spec = o.body.set("spec", Value::map());
  spec.set("runPolicy", "Serial");
  // Binary source: the build context is the output root uploaded by `oc start-build
  // --from-dir`, which holds `_runtime/`, so the build never fetches this project.
  Value& source = spec.set("source", Value::map());
  source.set("type", "Binary");
  source.set("binary", Value::map());
  Value& strategy = spec.set("strategy", Value::map());
  strategy.set("type", "Docker");
  strategy.set("dockerStrategy", Value::map()).set("dockerfilePath", layout.dir + "/Dockerfile");
  Value& to = spec.set("output", Value::map()).set("to", Value::map());
  to.set("kind", "ImageStreamTag");
  to.set("name", layout.image_tag);
  spec.set("successfulBuildsHistoryLimit", 3);
  spec.set("failedBuildsHistoryLimit", 3);
  return o;
}

}  // namespace mlenv::target::openshift
