//! Handlers for the fixture registry, so the generated fixture code compiles inside the test
//! crate exactly as the real registry's code compiles inside the binary.

pub mod demo {
    use majordomus::call::Call;
    use majordomus::CapabilityError;

    use crate::fixture_generated::types::demo::{EchoInput, EchoOutput, StampInput, StampOutput};
    use crate::fixture_generated::types::{DemoStampInputTarget, Item};

    pub fn echo(_ctx: &Call, input: EchoInput) -> Result<EchoOutput, CapabilityError> {
        let word = if input.shout {
            input.word.to_uppercase()
        } else {
            input.word
        };
        Ok(EchoOutput {
            words: vec![word; input.times as usize],
            items: Vec::new(),
            extra: None,
        })
    }

    pub fn stamp(_ctx: &Call, input: StampInput) -> Result<StampOutput, CapabilityError> {
        let name = match input.target {
            DemoStampInputTarget::File { path } => path,
            DemoStampInputTarget::Issue { id } => id,
        };
        Ok(StampOutput {
            stamped: true,
            at: Some(Item {
                name,
                size: None,
                labels: None,
            }),
        })
    }
}
