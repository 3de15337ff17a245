/*
 * natives.c — the helpers every native module uses (host.h, "classes"):
 * defining classes and functions on the native object, checking receivers and
 * arguments with errors that name the class, reading bytes, throwing long
 * messages. They depend on XS only.
 */
#include "xsAll.h"
#include "host.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* These helpers keep their temporaries on the XS stack, not in xsVars, so an
 * installer may call them after declaring its own variables. */
void hostDefineClass(xsMachine *the, xsSlot *native, const char *name,
	xsCallback constructor, int length, const HostMember *members, xsHostHooks *hooks)
{
	xsOverflow(-4);
	/* The prototype is itself a host object so instances made from it get host data. */
	fxNewHostObject(the, NULL);
	txSlot *prototype = the->stack;
	xsSetHostHooks(*prototype, hooks);
	for (const HostMember *m = members; m && m->name; m++) {
		if (m->getter)
			xsDefine(*prototype, hostID(m->name), xsNewHostFunction(m->callback, m->getter == 1 ? 0 : 1), (m->getter == 1 ? xsIsGetter : xsIsSetter) | xsDontEnum);
		else
			xsDefine(*prototype, hostID(m->name), xsNewHostFunction(m->callback, m->length), xsDontEnum);
	}
	fxPush(*prototype);
	fxNewHostConstructor(the, constructor, length, hostID(name));
	txSlot *function = the->stack;
	/* XS 13.3 creates `this` for host constructors only with the base flag. */
	mxFunctionInstanceCode(fxToInstance(the, function))->flag |= XS_BASE_FLAG;
	xsDefine(*native, hostID(name), *function, xsDontEnum);
	the->stack += 2;
}

void hostDefineFunction(xsMachine *the, xsSlot *native, const char *name, xsCallback callback, int length)
{
	xsDefine(*native, hostID(name), xsNewHostFunctionObject(callback, length, hostID(name)), xsDontEnum);
}

int hostDataOf(xsMachine *the, xsSlot *value, xsHostHooks *hooks, void **data)
{
	(void)the;
	if (value->kind != XS_REFERENCE_KIND)
		return 0;
	txSlot *host = value->value.reference->next;
	if (!host || host->kind != XS_HOST_KIND || !(host->flag & XS_HOST_HOOKS_FLAG) || host->value.host.variant.hooks != hooks)
		return 0;
	*data = host->value.host.data;
	return 1;
}

void hostConstructThis(xsMachine *the, xsHostHooks *hooks, const char *cls)
{
	void *data;
	if (!hostDataOf(the, &xsThis, hooks, &data) || data)
		xsTypeError("%s: invalid new.target: construct with new %s(...) or a subclass", cls, cls);
}

void *hostThisOrNull(xsMachine *the, xsHostHooks *hooks, const char *cls)
{
	void *data;
	if (!hostDataOf(the, &xsThis, hooks, &data))
		xsTypeError("%s: invalid receiver", cls);
	return data;
}

void *hostThis(xsMachine *the, xsHostHooks *hooks, const char *cls)
{
	void *data = hostThisOrNull(the, hooks, cls);
	if (!data)
		xsUnknownError("%s: closed", cls);
	return data;
}

int hostIsWhole(double value, double min, double max)
{
	return value >= min && value <= max && value == floor(value);
}

int hostHasOption(xsMachine *the, xsSlot *options, const char *name)
{
	if (!xsIsInstanceOf(*options, xsObjectPrototype))
		return 0;
	return xsHas(*options, hostID(name)) && xsTypeOf(xsGet(*options, hostID(name))) != xsUndefinedType;
}

int hostIntegerOption(xsMachine *the, xsSlot *options, const char *name, int min, int max, int fallback, const char *cls)
{
	if (!hostHasOption(the, options, name))
		return fallback;
	xsSlot value = xsGet(*options, hostID(name));
	int type = xsTypeOf(value);
	if (type != xsIntegerType && type != xsNumberType)
		xsTypeError("%s: %s must be a number", cls, name);
	double number = xsToNumber(value);
	if (!hostIsWhole(number, min, max))
		xsRangeError("%s: invalid %s", cls, name);
	return (int)number;
}

int hostStringOption(xsMachine *the, xsSlot *options, const char *name, char *buf, size_t size, int required, const char *cls)
{
	if (!hostHasOption(the, options, name)) {
		if (required)
			xsTypeError("%s: %s required", cls, name);
		return 0;
	}
	xsSlot value = xsGet(*options, hostID(name));
	if (xsTypeOf(value) != xsStringType)
		xsTypeError("%s: %s must be a string", cls, name);
	const char *string = xsToString(value);
	if (strlen(string) >= size)
		xsRangeError("%s: %s too long", cls, name);
	strcpy(buf, string);
	return 1;
}

void hostCallbackOption(xsMachine *the, xsSlot *options, const char *name, xsSlot *slot, const char *cls)
{
	if (!hostHasOption(the, options, name)) {
		*slot = xsUndefined;
		return;
	}
	*slot = xsGet(*options, hostID(name));
	if (!xsIsInstanceOf(*slot, xsFunctionPrototype))
		xsTypeError("%s: %s must be a function", cls, name);
}

void *hostBytes(xsMachine *the, xsSlot *value, size_t *length, const char *cls)
{
	txSlot *slot = NULL;
	if (xsIsInstanceOf(*value, xsObjectPrototype))
		slot = fxToInstance(the, value)->next;
	if (slot && slot->kind == XS_ARRAY_BUFFER_KIND) {
		if (!slot->value.arrayBuffer.address)
			xsTypeError("%s: detached buffer", cls);
		*length = (size_t)slot->next->value.bufferInfo.length;
		return slot->value.arrayBuffer.address;
	}
	/* Host buffers (psram module, SharedArrayBuffer) carry a buffer-info slot. */
	if (slot && slot->kind == XS_HOST_KIND && slot->next && slot->next->kind == XS_BUFFER_INFO_KIND) {
		if (!slot->value.host.data)
			xsTypeError("%s: detached buffer", cls);   /* a freed psram buffer */
		*length = (size_t)slot->next->value.bufferInfo.length;
		return slot->value.host.data;
	}
	if (slot && (slot->kind == XS_DATA_VIEW_KIND || slot->kind == XS_TYPED_ARRAY_KIND)) {
		txSlot *view = (slot->kind == XS_TYPED_ARRAY_KIND) ? slot->next : slot;
		txSlot *buffer = view->next;
		txSlot *target = buffer->value.reference->next;
		txByte *base = (target->kind == XS_ARRAY_BUFFER_KIND) ? target->value.arrayBuffer.address : (txByte *)target->value.host.data;
		if (!base)
			xsTypeError("%s: detached buffer", cls);
		*length = (size_t)fxGetDataViewSize(the, view, buffer);
		return base + view->value.dataView.offset;
	}
	xsTypeError("%s: expected a buffer (ArrayBuffer, TypedArray or DataView)", cls);
	return NULL;
}

#define HOST_MESSAGE_MAX 1024   /* a thrown message naming two paths (files.c move) */

/* As fxThrowMessage, with room for paths. */
void hostThrowMessage(xsMachine *the, int error, const char *format, ...)
{
	char message[HOST_MESSAGE_MAX];
	va_list arguments;
	va_start(arguments, format);
	vsnprintf(message, sizeof(message), format, arguments);
	va_end(arguments);
	/* Do not end inside a UTF-8 sequence cut by the limit. */
	size_t length = strlen(message);
	if (length == sizeof(message) - 1)
		while (length && (message[length - 1] & 0x80))
			message[--length] = 0;
	txSlot *slot = fxNewSlot(the);
	slot->kind = XS_INSTANCE_KIND;
	slot->value.instance.garbage = C_NULL;
	slot->value.instance.prototype = mxErrorPrototypes(error).value.reference;
	mxException.kind = XS_REFERENCE_KIND;
	mxException.value.reference = slot;
	slot = slot->next = fxNewSlot(the);
	slot->flag = XS_INTERNAL_FLAG;
	slot->kind = XS_ERROR_KIND;
	slot->value.error.info = C_NULL;
	slot->value.error.which = error;
	if (gxDefaults.captureErrorStack)
		gxDefaults.captureErrorStack(the, slot, the->frame);
	fxNextStringProperty(the, slot, message, mxID(_message), XS_DONT_ENUM_FLAG);
	fxJump(the);
	abort();   /* fxJump does not return; this tells the compiler so */
}
