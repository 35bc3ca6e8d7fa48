#!/usr/bin/env bash
# Installs the Debian packages Heed builds and tests on. This is the one list of them:
# the README's start command and .ci/run both call this script.
#
#   scripts/setup-debian.sh [EXTRA-PACKAGE...]
#
# As root it runs apt-get itself (containers have no sudo); as anyone else, through sudo.
set -euo pipefail

packages=(
  libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us pocketsphinx-testdata  # recognition
  libjson-c-dev                                                                 # the C plugin helper
  libasound2-dev                                                                # ALSA capture and playback
  libespeak-ng-dev espeak-ng                                                    # pronunciations, speech
  libspeexdsp-dev                                                               # noise suppression
  sphinxtrain pocketsphinx                                                      # heed adapt (bw, map_adapt, mllr_solve; mdef converter)
  sox flite alsa-utils                                                          # test and benchmark audio, a second synthetic voice; aplay for vocab pronounce --play
  libsystemd-dev dbus-daemon                                                    # D-Bus (sd-bus): the MPRIS plugin, notifications
  python3-dbus python3-gi                                                       # a notification server for tests
  mpv mpv-mpris playerctl                                                       # a real MPRIS player and client for tests
  python3-venv                                                                  # the wyoming client library's venv (.ci/run)
  binutils                                                                      # ld.gold: the release link's code order; nm for its test
  avahi-utils avahi-daemon                                                      # heed serve --wyoming: the _wyoming._tcp announcement
)

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "setup-debian.sh: installing packages needs root: run it as root, or install sudo" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}" "$@"
