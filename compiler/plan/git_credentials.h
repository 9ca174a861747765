#pragma once
// Credentials for the fetches of git imports, asked the way git asks them, so that an import
// URL never needs to carry a token (mlenv.lock and plans record the URL): ssh-agent for ssh,
// and for http(s) the user's credential helpers through `git credential fill`
// (git-credential(1)).

#include <git2.h>

namespace mlenv::plan {

/// What one fetch's credential callback remembers between libgit2's calls.
struct CredentialState {
  int asked = 0;  ///< calls so far: a second means the first credentials were refused
};

/// A git_credential_acquire_cb: `payload` is a CredentialState. Answers once per fetch (libgit2
/// asks again after a refusal, and git's helpers would answer the same), then GIT_PASSTHROUGH,
/// which ends the fetch with libgit2's "authentication required".
int acquire_credentials(git_credential** out, const char* url, const char* username_from_url,
                        unsigned int allowed_types, void* payload);

}  // namespace mlenv::plan
