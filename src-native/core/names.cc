#include "backend.h"
#include "types.h"

namespace axsnap {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNone: return "NONE";
    case ErrorCode::kNoAccessibilityBus: return "NO_ACCESSIBILITY_BUS";
    case ErrorCode::kAppNotFound: return "APP_NOT_FOUND";
    case ErrorCode::kWindowNotFound: return "WINDOW_NOT_FOUND";
    case ErrorCode::kAppUnresponsive: return "APP_UNRESPONSIVE";
    case ErrorCode::kTimeout: return "TIMEOUT";
    case ErrorCode::kElementGone: return "ELEMENT_GONE";
    case ErrorCode::kActionNotSupported: return "ACTION_NOT_SUPPORTED";
    case ErrorCode::kActionFailed: return "ACTION_FAILED";
    case ErrorCode::kNotSettable: return "NOT_SETTABLE";
    case ErrorCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case ErrorCode::kCaptureFailed: return "CAPTURE_FAILED";
    case ErrorCode::kInputFailed: return "INPUT_FAILED";
    case ErrorCode::kPermissionDenied: return "PERMISSION_DENIED";
    case ErrorCode::kDeliveryUncertain: return "DELIVERY_UNCERTAIN";
    case ErrorCode::kAmbiguousApp: return "AMBIGUOUS_APP";
    case ErrorCode::kAmbiguousWindow: return "AMBIGUOUS_WINDOW";
    case ErrorCode::kOcrUnavailable: return "OCR_UNAVAILABLE";
    case ErrorCode::kInternal: return "INTERNAL";
  }
  return "INTERNAL";
}

const char* WalkEndName(WalkEnd end) {
  switch (end) {
    case WalkEnd::kComplete: return "complete";
    case WalkEnd::kNodeLimit: return "node_limit";
    case WalkEnd::kDepthLimit: return "depth_limit";
    case WalkEnd::kDeadline: return "deadline";
    case WalkEnd::kContentPending: return "content_pending";
    case WalkEnd::kUnresponsive: return "unresponsive";
    case WalkEnd::kErrors: return "errors";
  }
  return "complete";
}

const char* RecoveryStepName(RecoveryStep step) {
  switch (step) {
    case RecoveryStep::kUnhide: return "unhide";
    case RecoveryStep::kActivate: return "activate";
    case RecoveryStep::kOpen: return "open";
    case RecoveryStep::kUnminimize: return "unminimize";
    case RecoveryStep::kRaise: return "raise";
    case RecoveryStep::kMainAndFocused: return "main-and-focused";
  }
  return "unknown";
}

}  // namespace axsnap
