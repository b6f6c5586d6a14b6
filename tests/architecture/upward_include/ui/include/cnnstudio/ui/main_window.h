// A header of the ui layer, for the include-direction check's own test.
#pragma once
