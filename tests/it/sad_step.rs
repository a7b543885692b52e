//! The training step after the gradient pass: tau diffusion and the Adam step against their
//! host references and a hand-computed step, as separate ops and as the trainer's one op, and
//! the neighbour lists one step keeps for the next.

use crate::common;

use burn::tensor::{Tensor, TensorData};
use burn_sad::sad::fit::{
    ADAM_STATE, AdamStep, NeighbourLists, adam_step, diffuse_and_step, diffuse_and_step_keeping,
    reference, tau_diffusion,
};
use burn_sad::sad::{Candidates, RenderGeometry, SiteTable};
use burn_sad::ssim::uses_fused_kernels;
use common::{assert_close, device, random_sites, values};

#[test]
fn tau_diffusion_matches_the_host_reference() {
    let device = device();
    let (width, height) = (41, 23);
    let table = random_sites(82, 8, width, height, 5);
    let sites = table.to_tensor(90, &device);
    let geometry = RenderGeometry::new(width, height);
    let candidates = Candidates::exact(&sites, geometry);
    let ids = candidates.ids().try_to_vec_as::<i32>().unwrap();
    let raw: Vec<f32> = (0..90)
        .map(|i| ((i * 37 % 17) as f32 - 8.0) * 0.5)
        .collect();
    let mut grads = vec![0f32; 90 * 10];
    for (i, g) in raw.iter().enumerate() {
        grads[i * 10 + 2] = *g;
        grads[i * 10 + 3] = 100.0;
    }
    let grads = Tensor::<2>::from_data(TensorData::new(grads, [90, 10]), &device);
    let got = values(tau_diffusion(&sites, &candidates, grads.clone(), 0.05, 4));
    let column = values(tau_diffusion(&sites, &candidates, grads, 0.05, 0));
    assert_eq!(column, raw, "zero passes return the raw column");
    let want = reference::tau_diffusion_reference(&table.sites, &ids, &raw, geometry, 0.05, 4);
    assert_ne!(want, raw, "diffusion changed nothing");
    assert_close(&got, &want, 1e-5, 1e-5, "tau diffusion");
}

fn hand_step() -> AdamStep {
    AdamStep {
        lr_position: 0.5,
        lr_log_tau: 0.1,
        lr_radius: 0.2,
        lr_color: 0.05,
        lr_direction: 0.3,
        lr_log_aniso: 0.4,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        correction1: 1.0 / (1.0 - 0.9f32.powi(2)),
        correction2: 1.0 / (1.0 - 0.999f32.powi(2)),
        grad_scale: 0.5,
        max_x: 9.0,
        max_y: 7.0,
    }
}

#[test]
fn adam_step_equals_a_hand_computed_step() {
    let device = device();
    let site = [2.0, 3.0, 5.0, 4.0, 0.5, 0.2, 0.999, 0.6, 0.8, 3.9];
    let dead = [-1.0, -1.0, 1.0, 2.0, 0.1, 0.2, 0.3, 1.0, 0.0, 0.5];
    let grads = [4.0, -2.0, 99.0, 1.0, 0.2, -0.4, -2.0, 1.0, 0.0, -6.0];
    let tau_grad = 0.6;
    // Second step (t = 2) from this state: position m = (0.1, 0), v = 0.01; all else 0.
    let mut state = [0f32; ADAM_STATE];
    state[0] = 0.1;
    state[2] = 0.01;
    let mut sites_in = site.to_vec();
    sites_in.extend(dead);
    let mut grads_in = grads.to_vec();
    grads_in.extend([1.0; 10]);
    let mut state_in = state.to_vec();
    state_in.extend([0.5; ADAM_STATE]);
    let (sites, state_out) = adam_step(
        Tensor::from_data(TensorData::new(sites_in, [2, 10]), &device),
        Tensor::from_data(TensorData::new(grads_in, [2, 10]), &device),
        Tensor::from_data(TensorData::new(vec![tau_grad, 1.0], [2]), &device),
        Tensor::from_data(TensorData::new(state_in, [2, ADAM_STATE]), &device),
        &hand_step(),
    );
    let (sites, state_out) = (values(sites), values(state_out));

    // By hand, with c1 = 1 / 0.19 and c2 = 1 / 0.001999 and gradients halved first.
    let (c1, c2) = (1.0 / 0.19f32, 1.0 / 0.001999f32);
    let adam = |m: f32, v: f32| m * c1 / ((v * c2).sqrt() + 1e-8);
    // Position: g = (2, −1); m = (0.9·0.1 + 0.2, −0.1) = (0.29, −0.1); v = 0.999·0.01 + 0.001·5.
    let v_pos = 0.999 * 0.01 + 0.001 * 5.0;
    let x = 2.0 - 0.5 * adam(0.29, v_pos);
    let y = 3.0 - 0.5 * adam(-0.1, v_pos);
    // log τ uses the diffused gradient 0.6·0.5 = 0.3: m = 0.03, v = 0.001·0.09.
    let tau = 5.0 - 0.1 * adam(0.03, 0.001 * 0.09);
    let radius = 4.0 - 0.2 * adam(0.05, 0.001 * 0.25);
    let red = 0.5 - 0.05 * adam(0.01, 0.001 * 0.01);
    let green = 0.2 - 0.05 * adam(-0.02, 0.001 * 0.04);
    // Blue would pass 1: clamped.
    let blue = (0.999f32 - 0.05 * adam(-0.1, 0.001 * 1.0)).min(1.0);
    // Direction u = (0.6, 0.8), g = (0.5, 0): tangent = g − u(g·u) = (0.32, −0.24).
    let (tx, ty) = (0.5 - 0.6 * 0.3, -0.8 * 0.3);
    let v_dir = 0.001 * (tx * tx + ty * ty);
    let (dx, dy) = (
        0.6 - 0.3 * adam(0.1 * tx, v_dir),
        0.8 - 0.3 * adam(0.1 * ty, v_dir),
    );
    let norm = (dx * dx + dy * dy).sqrt();
    // log anisotropy would pass 4: clamped.
    let aniso = (3.9f32 - 0.4 * adam(-0.3, 0.001 * 9.0)).min(4.0);
    let want = [
        x,
        y,
        tau,
        radius,
        red,
        green,
        blue,
        dx / norm,
        dy / norm,
        aniso,
    ];
    assert_close(&sites[..10], &want, 1e-5, 1e-5, "stepped site");
    assert_eq!(&sites[10..], &dead, "inactive sites are left alone");
    assert_eq!(&state_out[ADAM_STATE..], &[0.5; ADAM_STATE]);
    assert_close(&state_out[..3], &[0.29, -0.1, v_pos], 1e-7, 1e-6, "moments");
}

#[test]
fn adam_kernel_matches_the_host_reference_on_many_sites() {
    let device = device();
    let table = random_sites(273, 27, 50, 40, 9);
    let sites = table.to_tensor(300, &device);
    let grads: Vec<f32> = (0..3000)
        .map(|i| ((i * 7919 % 201) as f32 - 100.0) * 0.37)
        .collect();
    let tau: Vec<f32> = (0..300)
        .map(|i| ((i * 31 % 13) as f32 - 6.0) * 0.2)
        .collect();
    let state: Vec<f32> = (0..300 * ADAM_STATE)
        .map(|i| (i * 13 % 7) as f32 * 0.01)
        .collect();
    let step = AdamStep {
        max_x: 49.0,
        max_y: 39.0,
        ..hand_step()
    };
    let (got_sites, got_state) = adam_step(
        sites,
        Tensor::from_data(TensorData::new(grads.clone(), [300, 10]), &device),
        Tensor::from_data(TensorData::new(tau.clone(), [300]), &device),
        Tensor::from_data(TensorData::new(state.clone(), [300, ADAM_STATE]), &device),
        &step,
    );
    let mut host_sites = table.sites.clone();
    let mut host_state: Vec<[f32; ADAM_STATE]> = state
        .chunks_exact(ADAM_STATE)
        .map(|r| r.try_into().unwrap())
        .collect();
    let host_grads: Vec<[f32; 10]> = grads
        .chunks_exact(10)
        .map(|r| r.try_into().unwrap())
        .collect();
    reference::adam_step_reference(&mut host_sites, &mut host_state, &host_grads, &tau, &step);
    assert_close(
        &values(got_sites),
        &host_sites.concat(),
        1e-5,
        1e-5,
        "sites",
    );
    assert_close(
        &values(got_state),
        &host_state.concat(),
        1e-6,
        1e-5,
        "state",
    );
}

#[test]
fn diffusion_and_adam_in_one_op_equal_the_two_host_references() {
    let device = device();
    let (width, height) = (41, 23);
    let table = random_sites(82, 8, width, height, 5);
    let capacity = 90;
    let geometry = RenderGeometry::new(width, height);
    let candidates = Candidates::exact(&table.to_tensor(capacity, &device), geometry);
    let ids = candidates.ids().try_to_vec_as::<i32>().unwrap();
    let grads: Vec<f32> = (0..capacity * 10)
        .map(|i| ((i * 7919 % 201) as f32 - 100.0) * 0.37)
        .collect();
    let state: Vec<f32> = (0..capacity * ADAM_STATE)
        .map(|i| (i * 13 % 7) as f32 * 0.01)
        .collect();
    let step = AdamStep {
        max_x: (width - 1) as f32,
        max_y: (height - 1) as f32,
        ..hand_step()
    };
    let host_grads: Vec<[f32; 10]> = grads
        .chunks_exact(10)
        .map(|r| r.try_into().unwrap())
        .collect();
    let raw: Vec<f32> = host_grads.iter().map(|row| row[2]).collect();
    // Four passes (the trainer's), two (the list's first reader is the step), one (a pass of its
    // own, then a copy in the step) and none (the log τ column itself).
    for passes in [4, 2, 1, 0] {
        let (got_sites, got_state) = diffuse_and_step(
            table.to_tensor(capacity, &device),
            &candidates,
            Tensor::from_data(TensorData::new(grads.clone(), [capacity, 10]), &device),
            Tensor::from_data(
                TensorData::new(state.clone(), [capacity, ADAM_STATE]),
                &device,
            ),
            &step,
            (0.05, passes),
        );
        let tau =
            reference::tau_diffusion_reference(&table.sites, &ids, &raw, geometry, 0.05, passes);
        if passes > 0 {
            assert_ne!(tau, raw, "diffusion changed nothing");
        }
        let mut host_sites = table.sites.clone();
        host_sites.resize(capacity, burn_sad::sad::INACTIVE_SITE);
        let mut host_state: Vec<[f32; ADAM_STATE]> = state
            .chunks_exact(ADAM_STATE)
            .map(|r| r.try_into().unwrap())
            .collect();
        reference::adam_step_reference(&mut host_sites, &mut host_state, &host_grads, &tau, &step);
        let what = format!("{passes} passes");
        assert_close(&values(got_sites), &host_sites.concat(), 1e-5, 1e-5, &what);
        assert_close(&values(got_state), &host_state.concat(), 1e-6, 1e-5, &what);
    }
}

#[test]
fn kept_neighbour_lists_give_the_same_step() {
    let device = device();
    let (width, height) = (41, 23);
    let capacity = 90;
    let table = random_sites(82, 8, width, height, 5);
    let geometry = RenderGeometry::new(width, height);
    let candidates = Candidates::exact(&table.to_tensor(capacity, &device), geometry);
    let grads: Vec<f32> = (0..capacity * 10)
        .map(|i| ((i * 7919 % 201) as f32 - 100.0) * 0.37)
        .collect();
    let step = AdamStep {
        max_x: (width - 1) as f32,
        max_y: (height - 1) as f32,
        ..hand_step()
    };
    let run = |table: &SiteTable, kept: Option<&NeighbourLists>| {
        diffuse_and_step_keeping(
            table.to_tensor(capacity, &device),
            &candidates,
            Tensor::from_data(TensorData::new(grads.clone(), [capacity, 10]), &device),
            Tensor::zeros([capacity, ADAM_STATE], &device),
            &step,
            (0.05, 4),
            kept,
        )
    };
    let (_, _, lists) = run(&table, None);
    // The next step's sites: every third live site moves two cells to the right, the others a
    // little, some of those across a cell's rounding line, so the kept lists hold for some
    // sites and not for others.
    let home = |x: f32, y: f32| ((x + 0.5) as i32, (y + 0.5) as i32);
    let mut moved = table.clone();
    for (i, site) in moved.sites.iter_mut().enumerate() {
        if site[0] >= 0.0 {
            let shift = if i % 3 == 0 { 2.0 } else { 0.3 };
            site[0] = (site[0] + shift).min((width - 1) as f32);
        }
    }
    let changed = (table.sites.iter().zip(&moved.sites))
        .filter(|(a, b)| a[0] >= 0.0 && home(a[0], a[1]) != home(b[0], b[1]))
        .count();
    let live = table.sites.iter().filter(|s| s[0] >= 0.0).count();
    assert!(
        changed > 0 && changed < live,
        "{changed} of {live} sites changed cell"
    );
    let (kept_sites, kept_state, _) = run(&moved, lists.as_ref());
    let (fresh_sites, fresh_state, _) = run(&moved, None);
    assert_eq!(values(kept_sites), values(fresh_sites), "sites");
    assert_eq!(values(kept_state), values(fresh_state), "state");
    if uses_fused_kernels(&device) {
        assert!(lists.is_some(), "a CubeCL step keeps its lists");
    }
}
