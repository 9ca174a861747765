#include "targets/openshift/builders.h"

namespace mlenv::target::openshift {

std::string internal_image(const EnvLayout& layout) {
  return "image-registry.openshift-image-registry.svc:5000/" + layout.namespace_name + "/" +
         layout.image_tag;
}

// The envs that run one image share its ImageStream and BuildConfig (Object::shared): named
// after the image, labelled as no env's, the same bytes in each env directory.
Object image_stream(const EnvLayout& layout) {
  Object o = make_object("image.openshift.io/v1", "ImageStream", layout.image_name,
                         layout.namespace_name, layout.shared_labels);
  o.order = ApplyOrder::Image;
  o.shared = true;
  o.body.set("spec", Value::map()).set("lookupPolicy", Value::map()).set("local", true);
  return o;
}

Object build_config(const EnvLayout& layout) {
  Object o = make_object("build.openshift.io/v1", "BuildConfig", layout.image_name,
                         layout.namespace_name, layout.shared_labels);
  o.order = ApplyOrder::Build;
  o.shared = true;
  Value& spec = o.body.set("spec", Value::map());
  spec.set("runPolicy", "Serial");
  // Binary source: the build context is what `oc start-build --from-dir` uploads (apply's
  // build_context.h: the Dockerfile at its root and `_runtime/`), so the build never fetches
  // this project.
  Value& source = spec.set("source", Value::map());
  source.set("type", "Binary");
  source.set("binary", Value::map());
  Value& strategy = spec.set("strategy", Value::map());
  strategy.set("type", "Docker");
  strategy.set("dockerStrategy", Value::map()).set("dockerfilePath", "Dockerfile");
  Value& to = spec.set("output", Value::map()).set("to", Value::map());
  to.set("kind", "ImageStreamTag");
  to.set("name", layout.image_tag);
  spec.set("successfulBuildsHistoryLimit", 3);
  spec.set("failedBuildsHistoryLimit", 3);
  return o;
}

}  // namespace mlenv::target::openshift
