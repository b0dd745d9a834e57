package relayout

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// Lance serializes its metadata with prost, which writes every field in
// field-number order. Go's protobuf writes the members of a oneof after the
// other fields (FullZipLayout's bits_per_offset after its layers, for
// one), so the same message gets other bytes. Descriptions written by this
// package use marshalOrdered, so that a page re-expressed twice, 2.2 -> 2.3
// -> 2.2, gets Lance's description bytes back and the file is the original
// one byte for byte.

// marshalOrdered serializes m with its fields in field-number order
// (recursively), unknown fields last.
func marshalOrdered(m proto.Message) ([]byte, error) {
	return appendOrdered(nil, m.ProtoReflect())
}

func appendOrdered(dst []byte, m protoreflect.Message) ([]byte, error) {
	fds := m.Descriptor().Fields()
	order := make([]protoreflect.FieldDescriptor, fds.Len())
	for i := range order {
		order[i] = fds.Get(i)
	}
	slices.SortFunc(order, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number()) - int(b.Number()) })
	for _, fd := range order {
		if !m.Has(fd) {
			continue
		}
		var err error
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := m.Get(fd).List()
			for i := 0; i < l.Len(); i++ {
				if dst, err = appendSub(dst, fd.Number(), l.Get(i).Message()); err != nil {
					return nil, err
				}
			}
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			if dst, err = appendSub(dst, fd.Number(), m.Get(fd).Message()); err != nil {
				return nil, err
			}
		default:
			// A scalar, a packed list or a map: its bytes alone, as Go
			// writes them in a message holding only this field.
			one := m.New()
			one.Set(fd, m.Get(fd))
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(one.Interface())
			if err != nil {
				return nil, err
			}
			dst = append(dst, b...)
		}
	}
	return append(dst, m.GetUnknown()...), nil
}

func appendSub(dst []byte, n protoreflect.FieldNumber, m protoreflect.Message) ([]byte, error) {
	b, err := appendOrdered(nil, m)
	if err != nil {
		return nil, err
	}
	dst = protowire.AppendTag(dst, n, protowire.BytesType)
	return protowire.AppendBytes(dst, b), nil
}

// marshalAnyOrdered wraps m in a google.protobuf.Any with the exact type
// URL, both in field order.
func marshalAnyOrdered(url string, m proto.Message) ([]byte, error) {
	v, err := marshalOrdered(m)
	if err != nil {
		return nil, err
	}
	return marshalOrdered(&anypb.Any{TypeUrl: url, Value: v})
}
