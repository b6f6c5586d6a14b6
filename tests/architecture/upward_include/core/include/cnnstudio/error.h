// A header of the core layer, for the include-direction check's own test.
#pragma once
