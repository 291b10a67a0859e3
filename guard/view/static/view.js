// guard view: small progressive enhancements; every page works without this file.
"use strict";
